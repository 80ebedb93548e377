// DownloadButton: saves a workspace file's bytes; the request carries the
// bearer token (fetch + blob), which a plain link could not.
import { useState } from 'react';
import { downloadFile } from '../api';
import { useToast } from './Toasts';

export function DownloadButton({ taskId, path, label = 'Download' }: { taskId: string; path: string; label?: string }) {
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  return (
    <button
      type="button"
      className="small"
      disabled={busy}
      data-testid="download"
      onClick={async () => {
        setBusy(true);
        try {
          await downloadFile(taskId, path);
        } catch (e) {
          toast(`Download failed: ${(e as Error).message}`, 'error');
        } finally {
          setBusy(false);
        }
      }}
    >
      {label}
    </button>
  );
}
