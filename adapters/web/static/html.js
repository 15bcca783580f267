// The one way this dashboard builds DOM: htm's tagged templates over
// Preact's createElement. Every interpolated value becomes a text node or
// a property, never parsed HTML, so text from the API (display names,
// paths, branch and file names) always shows literally.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
