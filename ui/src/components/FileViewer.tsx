// FileViewer: one workspace file — text highlighted by its extension
// (markdown files also rendered), a binary one as a download, a truncated
// one with a note and the full download.
import { useEffect, useState } from 'react';
import { Api } from '../api';
import type { WorkspaceFile } from '../types';
import { bytes } from '../format';
import { languageOfPath } from '../render/highlight';
import { CodeView } from './CodeView';
import { DownloadButton } from './DownloadButton';
import { MarkdownView } from './MarkdownView';

export function FileViewer({ taskId, path, version }: { taskId: string; path: string; version: number }) {
  const [file, setFile] = useState<WorkspaceFile | null>(null);
  const [error, setError] = useState('');
  const [rendered, setRendered] = useState(false);
  useEffect(() => {
    let alive = true;
    setError('');
    Api.file(taskId, path)
      .then((f) => alive && setFile(f))
      .catch((e) => alive && setError((e as Error).message));
    return () => {
      alive = false;
    };
  }, [taskId, path, version]);

  const isMarkdown = /\.(md|markdown)$/i.test(path);
  return (
    <div className="file-viewer" data-testid="file-viewer" data-path={path}>
      <div className="row file-viewer-head">
        <code className="file-path">{path}</code>
        {file && <small className="muted">{bytes(file.size)}</small>}
        <span className="spacer" />
        {isMarkdown && file?.content !== null && file && (
          <button type="button" className="small" aria-pressed={rendered} onClick={() => setRendered((r) => !r)}>
            {rendered ? 'Source' : 'Rendered'}
          </button>
        )}
        <DownloadButton taskId={taskId} path={path} />
      </div>
      {error && <p className="error">{error}</p>}
      {file && file.path === path && (
        <>
          {file.truncated && <p className="muted small">Showing the beginning of the file; download it for the rest.</p>}
          {file.binary || file.content === null ? (
            <p className="muted" data-testid="binary-file">
              Binary file ({bytes(file.size)}) — use Download to save it.
            </p>
          ) : rendered && isMarkdown ? (
            <MarkdownView text={file.content} className="file-rendered" />
          ) : (
            <CodeView text={file.content} language={languageOfPath(path)} className="file-content" />
          )}
        </>
      )}
    </div>
  );
}
