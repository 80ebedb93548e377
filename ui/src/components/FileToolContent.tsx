// FileToolContent: what a WriteFile / EditFile call wrote, as text instead of
// an escaped JSON string — the file's content (highlighted by its extension)
// or, for an edit, the replaced and the new text as a small diff — with a
// link that opens the file in the workspace pane.
import { languageOfPath } from '../render/highlight';
import { useOpenFile } from '../workspaceLink';
import { CodeView } from './CodeView';

export const FILE_TOOLS = new Set(['WriteFile', 'EditFile']);

export function parseFileArgs(args: string): Record<string, unknown> | null {
  try {
    const o = JSON.parse(args) as unknown;
    return o && typeof o === 'object' ? (o as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function FileToolContent({ tool, args }: { tool: string; args: Record<string, unknown> }) {
  const openFile = useOpenFile();
  const path = String(args.path ?? '');
  return (
    <div className="file-tool" data-testid="file-tool-content">
      <div className="row">
        <code className="file-path">{path}</code>
        <span className="spacer" />
        {openFile && path && (
          <button type="button" className="small" onClick={() => openFile(path)}>
            Open in Files
          </button>
        )}
      </div>
      {tool === 'EditFile' ? (
        <EditDiff oldText={String(args.old_string ?? '')} newText={String(args.new_string ?? '')} />
      ) : (
        <CodeView text={String(args.content ?? '')} language={languageOfPath(path)} />
      )}
    </div>
  );
}

function EditDiff({ oldText, newText }: { oldText: string; newText: string }) {
  const lines = [
    ...oldText.split('\n').map((l) => ({ sign: '-', text: l })),
    ...newText.split('\n').map((l) => ({ sign: '+', text: l })),
  ];
  return (
    <pre className="diff-patch" data-testid="edit-diff">
      {lines.map((l, i) => (
        <div key={i} className={l.sign === '-' ? 'diff-del' : 'diff-add'}>
          {l.sign} {l.text}
        </div>
      ))}
    </pre>
  );
}
