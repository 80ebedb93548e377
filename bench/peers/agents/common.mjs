// Shared by the four peer agents: command line, the ReadFile tool's body and
// the one JSON line each prints at the end. Kept tiny so that what a run costs
// is the framework's.
//   node agents/<framework>.mjs --base-url http://127.0.0.1:PORT/v1 --fixture DIR --prompt TEXT
import { readFileSync } from 'node:fs';
import { join, normalize, isAbsolute } from 'node:path';

export function parseArgs(argv = process.argv.slice(2)) {
  const o = { baseUrl: '', fixture: '', prompt: '', model: 'fake-model' };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i], v = argv[i + 1];
    if (k === '--base-url') o.baseUrl = v;
    else if (k === '--fixture') o.fixture = v;
    else if (k === '--prompt') o.prompt = v;
    else if (k === '--model') o.model = v;
    else throw new Error(`unknown argument ${k}`);
  }
  if (!o.baseUrl || !o.fixture || !o.prompt) {
    throw new Error('usage: --base-url URL --fixture DIR --prompt TEXT [--model M]');
  }
  return o;
}

export const SYSTEM = 'You are a helpful agent. Use the ReadFile tool to read files of the workspace; ' +
  'when you have what you need, answer.';
export const TOOL_DESCRIPTION = 'Read a text file of the workspace and return its content.';

// The tool: the file's text, or an error text (never throws, like maestro's).
export function makeReadFile(fixture) {
  const state = { calls: 0 };
  const read = (path) => {
    state.calls++;
    const rel = normalize(String(path ?? ''));
    if (isAbsolute(rel) || rel.startsWith('..')) return `Error: ${path} is outside the workspace`;
    try {
      return readFileSync(join(fixture, rel), 'utf8');
    } catch (e) {
      return `Error: cannot read ${path}: ${e.code ?? e.message}`;
    }
  };
  return { read, state };
}

export function report(framework, state, text, extra = {}) {
  process.stdout.write(JSON.stringify({
    framework, iterations: state.calls, final_text: String(text ?? '').slice(0, 80), ...extra,
  }) + '\n');
}
