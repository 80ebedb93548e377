// Keyboard shortcuts: `n` opens the New task dialog, `/` focuses the task
// search, Escape closes the open dialog — none of them while the person is
// typing in a field (Escape inside the dialog's own fields still closes it).
import { useEffect, useRef } from 'react';
import { isTyping } from './useDismiss';

export interface Shortcuts {
  newTask: () => void;
  focusSearch: () => void;
  escape: () => void;
}

export function useShortcuts(s: Shortcuts): void {
  const ref = useRef(s);
  ref.current = s;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      if (isTyping(e.target)) return;
      if (e.key === 'n') {
        e.preventDefault();
        ref.current.newTask();
      } else if (e.key === '/') {
        e.preventDefault();
        ref.current.focusSearch();
      } else if (e.key === 'Escape') {
        ref.current.escape();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}
