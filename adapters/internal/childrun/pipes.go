package childrun

import "os"

// Pipes are a child's stdin, stdout and stderr. Each pair is created by
// os.Pipe, so both ends are close-on-exec and no other child inherits
// the Hub's ends.
type Pipes struct {
	StdinR, StdinW   *os.File // the Hub holds StdinW open for the child's life
	StdoutR, StdoutW *os.File
	StderrR, StderrW *os.File
}

// NewPipes makes the three pipes, or none.
func NewPipes() (*Pipes, error) {
	var p Pipes
	var err error
	if p.StdinR, p.StdinW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.StdoutR, p.StdoutW, err = os.Pipe(); err != nil {
		p.StdinR.Close()
		p.StdinW.Close()
		return nil, err
	}
	if p.StderrR, p.StderrW, err = os.Pipe(); err != nil {
		p.CloseChildEnds()
		p.StdinW.Close()
		p.StdoutR.Close()
		return nil, err
	}
	return &p, nil
}

// ChildEnds are the ends a started process gets.
func (p *Pipes) ChildEnds() (stdin, stdout, stderr *os.File) { return p.StdinR, p.StdoutW, p.StderrW }

// CloseChildEnds closes the child's ends, once the child holds its own
// copies (or failed to start).
func (p *Pipes) CloseChildEnds() {
	for _, f := range []*os.File{p.StdinR, p.StdoutW, p.StderrW} {
		if f != nil {
			f.Close()
		}
	}
}

// CloseOurEnds closes the Hub's ends. Closing StdinW earlier is how a
// child is told the Hub is gone; closing it again here is harmless.
func (p *Pipes) CloseOurEnds() {
	p.StdinW.Close()
	p.StdoutR.Close()
	p.StderrR.Close()
}
