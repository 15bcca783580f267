// Turning the document state's flat file lists into a folder tree, and
// indexing Git's changed files by document id.

/** changeIndex maps absolute file path -> RepositoryChangedFile. */
export function changeIndex(d) {
  const idx = new Map();
  for (const r of d.header.repositories || []) {
    for (const f of r.changedFiles || []) idx.set(r.rootPath.replace(/\/$/, '') + '/' + f.path, f);
  }
  return idx;
}

/**
 * buildTree returns {children} of folders ({name, key, children,
 * changed}) and files ({name, key, id, path, mtimeMs}), folders first,
 * each sorted by name. With only set, it keeps the files that map has.
 * With several roots, each root is a top-level folder.
 */
export function buildTree(d, only) {
  const top = { key: '', children: [], dirs: new Map() };
  const multi = d.roots.length > 1;
  for (const root of d.roots) {
    let base = top;
    if (multi) base = dirOf(top, root.label || root.path, 'root:' + root.id);
    for (const doc of root.docs.values()) {
      if (only && !only.has(doc.id)) continue;
      const parts = doc.relativePath.split('/');
      let at = base;
      for (let i = 0; i < parts.length - 1; i++) at = dirOf(at, parts[i], at.key + '/' + parts[i]);
      at.children.push({ name: parts[parts.length - 1], key: 'f:' + doc.id, id: doc.id, path: doc.relativePath, mtimeMs: doc.mtimeMs });
    }
  }
  finish(top);
  return top;
}

function dirOf(parent, name, key) {
  let d = parent.dirs.get(name);
  if (!d) {
    d = { name, key, children: [], dirs: new Map() };
    parent.dirs.set(name, d);
    parent.children.push(d);
  }
  return d;
}

const byName = (a, b) => (a.children ? 0 : 1) - (b.children ? 0 : 1) || a.name.localeCompare(b.name);

function finish(n) {
  n.children.sort(byName);
  for (const c of n.children) if (c.children) finish(c);
  delete n.dirs;
}
