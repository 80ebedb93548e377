// FileTree: the workspace's flat, sorted listing as a tree — directories
// fold open and shut, a file click selects it.
import { useMemo, useState } from 'react';
import type { WorkspaceEntry } from '../types';
import { bytes } from '../format';

interface Node {
  name: string;
  entry: WorkspaceEntry;
  children: Node[];
}

function buildTree(files: WorkspaceEntry[]): Node[] {
  const root: Node[] = [];
  const dirs = new Map<string, Node>();
  for (const f of files) {
    const slash = f.path.lastIndexOf('/');
    const parent = slash < 0 ? '' : f.path.slice(0, slash);
    const node: Node = { name: f.path.slice(slash + 1), entry: f, children: [] };
    if (f.type === 'dir') dirs.set(f.path, node);
    const list = parent ? dirs.get(parent)?.children ?? root : root;
    list.push(node);
  }
  const sort = (l: Node[]) => {
    l.sort((a, b) => Number(b.entry.type === 'dir') - Number(a.entry.type === 'dir') || a.name.localeCompare(b.name));
    l.forEach((n) => sort(n.children));
  };
  sort(root);
  return root;
}

export function FileTree({ files, selected, onSelect }: { files: WorkspaceEntry[]; selected: string; onSelect: (path: string) => void }) {
  const tree = useMemo(() => buildTree(files), [files]);
  return (
    <ul className="file-tree" role="tree" aria-label="Workspace files">
      {tree.map((n) => (
        <TreeNode key={n.entry.path} node={n} selected={selected} onSelect={onSelect} depth={0} />
      ))}
    </ul>
  );
}

function TreeNode({ node, selected, onSelect, depth }: { node: Node; selected: string; onSelect: (p: string) => void; depth: number }) {
  const isDir = node.entry.type === 'dir';
  const [open, setOpen] = useState(depth < 1 || selected.startsWith(`${node.entry.path}/`));
  return (
    <li role="treeitem" aria-expanded={isDir ? open : undefined} aria-selected={node.entry.path === selected}>
      <button
        type="button"
        className={`tree-item ${node.entry.path === selected ? 'selected' : ''}`}
        style={{ paddingLeft: 8 + depth * 14 }}
        data-path={node.entry.path}
        onClick={() => (isDir ? setOpen((o) => !o) : onSelect(node.entry.path))}
      >
        <span aria-hidden="true">{isDir ? (open ? '▾' : '▸') : node.entry.type === 'symlink' ? '↪' : '·'}</span> {node.name}
        {!isDir && <small className="muted"> {bytes(node.entry.size)}</small>}
      </button>
      {isDir && open && node.children.length > 0 && (
        <ul role="group">
          {node.children.map((c) => (
            <TreeNode key={c.entry.path} node={c} selected={selected} onSelect={onSelect} depth={depth + 1} />
          ))}
        </ul>
      )}
    </li>
  );
}
