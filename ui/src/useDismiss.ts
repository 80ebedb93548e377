// useDismiss: closes a popover or dialog on Escape and on a press outside
// `ref` (a press on `ignore`, e.g. the button that toggles it, is left to
// that button). Escape typed into a text field outside the popover is the
// field's own business.
import { useEffect, type RefObject } from 'react';

export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
}

export function useDismiss(
  open: boolean,
  ref: RefObject<HTMLElement>,
  onClose: () => void,
  ignore?: RefObject<HTMLElement>,
): void {
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      const inside = ref.current?.contains(e.target as Node) ?? false;
      if (!inside && isTyping(e.target)) return;
      e.stopPropagation();
      // Leave the focus on the page, not on a field about to be removed: until
      // the browser notices the removal, keys would go to that detached field
      // and the page's shortcuts (`/`, `n`) would miss them.
      const focused = document.activeElement;
      if (focused instanceof HTMLElement && ref.current?.contains(focused)) focused.blur();
      onClose();
    };
    const onDown = (e: PointerEvent) => {
      const t = e.target as Node;
      if (ref.current?.contains(t) || ignore?.current?.contains(t)) return;
      onClose();
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onDown);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onDown);
    };
  }, [open, ref, onClose, ignore]);
}
