// WorkspacePane: the task's files beside the chat — "Files" (a tree and the
// selected file's viewer) and "Changes" (the diff, total or per job).
import type { Workspace } from '../useWorkspace';
import { DiffView } from './DiffView';
import { FileTree } from './FileTree';
import { FileViewer } from './FileViewer';

export type WorkspaceTab = 'files' | 'changes';

interface Props {
  taskId: string;
  ws: Workspace;
  tab: WorkspaceTab;
  path: string;
  version: number;
  onTab: (t: WorkspaceTab) => void;
  onPath: (p: string) => void;
  onClose: () => void;
}

export function WorkspacePane({ taskId, ws, tab, path, version, onTab, onPath, onClose }: Props) {
  const files = ws.listing?.files ?? [];
  const fileCount = files.filter((f) => f.type !== 'dir').length;
  const changeCount = ws.diff?.total.files.length ?? 0;
  return (
    <aside className="workspace" aria-label="Workspace" data-testid="workspace">
      <div className="workspace-head row">
        <div role="tablist" className="tabs">
          <button role="tab" aria-selected={tab === 'files'} className={tab === 'files' ? 'tab active' : 'tab'} onClick={() => onTab('files')}>
            Files ({fileCount})
          </button>
          <button role="tab" aria-selected={tab === 'changes'} className={tab === 'changes' ? 'tab active' : 'tab'} onClick={() => onTab('changes')}>
            Changes ({changeCount})
          </button>
        </div>
        <span className="spacer" />
        <button className="ghost small" aria-label="Close the workspace" onClick={onClose}>
          ✕
        </button>
      </div>
      {ws.listing && (
        <small className="muted workspace-root">
          {ws.listing.root_kind === 'space' ? `space ${ws.listing.space}` : 'ephemeral workspace'}
          {ws.listing.truncated ? ' · listing truncated' : ''}
        </small>
      )}
      {ws.error && <p className="error">{ws.error}</p>}
      {tab === 'files' ? (
        <div className="workspace-files">
          {files.length === 0 ? <p className="muted pad">No files yet.</p> : <FileTree files={files} selected={path} onSelect={onPath} />}
          {path && <FileViewer taskId={taskId} path={path} version={version} />}
        </div>
      ) : ws.diff ? (
        <DiffView
          diff={ws.diff}
          onOpen={(p) => {
            onPath(p);
            onTab('files');
          }}
        />
      ) : (
        <p className="muted pad">No changes to show.</p>
      )}
    </aside>
  );
}
