// Files a person attaches to a new task (CreateTaskDialog) or a message
// (ChatComposerPanel): a picker button, drag-and-drop onto the form, or a
// paste into the text box (a screenshot from the clipboard); listed as chips
// with a remove button until sent. The server stores them in the task's
// workspace under attachments/ and lists them in the agent's next prompt
// (docs/api.md "Attachments"); Api.createTask / Api.comment send them as
// multipart/form-data.
import { useRef, useState } from 'react';
import { bytes } from '../format';

export interface Attachments {
  files: File[];
  add: (list: FileList | File[] | null | undefined) => void;
  remove: (index: number) => void;
  clear: () => void;
  // Spread on the element that takes drops.
  dropProps: { onDragOver: (e: React.DragEvent) => void; onDrop: (e: React.DragEvent) => void };
  // On the text box: pasted files join the list; pasted text stays text.
  onPaste: (e: React.ClipboardEvent) => void;
}

export function useAttachments(): Attachments {
  const [files, setFiles] = useState<File[]>([]);
  const add = (list: FileList | File[] | null | undefined) => {
    const more = list ? Array.from(list) : [];
    if (more.length > 0) setFiles((f) => [...f, ...more]);
  };
  return {
    files,
    add,
    remove: (index) => setFiles((f) => f.filter((_, i) => i !== index)),
    clear: () => setFiles([]),
    dropProps: {
      onDragOver: (e) => {
        if (e.dataTransfer.types.includes('Files')) e.preventDefault();
      },
      onDrop: (e) => {
        if (e.dataTransfer.files.length === 0) return;
        e.preventDefault();
        add(e.dataTransfer.files);
      },
    },
    onPaste: (e) => {
      if (e.clipboardData.files.length === 0) return;
      e.preventDefault();
      add(e.clipboardData.files);
    },
  };
}

export function AttachButton({ onFiles, disabled }: { onFiles: (list: FileList | null) => void; disabled?: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" className="ghost" title="Attach files (or drop or paste them)" disabled={disabled} onClick={() => input.current?.click()}>
        Attach…
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        data-testid="attach-input"
        onChange={(e) => {
          onFiles(e.target.files);
          e.target.value = ''; // the same file may be picked again
        }}
      />
    </>
  );
}

export function AttachmentChips({ files, onRemove }: { files: File[]; onRemove: (index: number) => void }) {
  if (files.length === 0) return null;
  return (
    <ul className="attachment-chips" aria-label="Attached files">
      {files.map((f, i) => (
        <li className="chip" key={`${i}-${f.name}`}>
          <span>{f.name}</span> <span className="muted">{bytes(f.size)}</span>
          <button type="button" className="chip-remove" aria-label={`Remove ${f.name}`} onClick={() => onRemove(i)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
