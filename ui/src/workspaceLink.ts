// Lets a tool card open a file in the chat's workspace pane: ChatPane
// provides the opener (null while the server has no workspace routes).
import { createContext, useContext } from 'react';

export const OpenFileContext = createContext<((path: string) => void) | null>(null);

export function useOpenFile() {
  return useContext(OpenFileContext);
}
