// Drives maestro-fakellm's Anthropic Messages fake (POST /v1/messages) with
// the official @anthropic-ai/sdk, streaming and not, and prints one JSON
// object of what the SDK saw (tests/integration/llm/anthropic_sdk_test.cc
// asserts it). The fake runs tests/llm-sdks/anthropic_script.json, whose
// replies match the tag in each request's last message.
//
// Usage: node anthropic_check.mjs http://127.0.0.1:PORT   (no /v1: the SDK
// appends /v1/messages to its baseURL)
import Anthropic from '@anthropic-ai/sdk';

const baseURL = process.argv[2];
const client = new Anthropic({ baseURL, apiKey: 'sk-ant-fake', maxRetries: 1, timeout: 20000 });
const model = 'claude-fake-1';

const usage = (u) => ({
  input_tokens: u.input_tokens,
  output_tokens: u.output_tokens,
  cache_creation_input_tokens: u.cache_creation_input_tokens,
  cache_read_input_tokens: u.cache_read_input_tokens,
});

const tools = [
  {
    name: 'read_file',
    description: 'Reads a file',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  {
    name: 'write_file',
    input_schema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
  },
];

const user = (text) => [{ role: 'user', content: text }];

async function plain() {
  const m = await client.messages.create({ model, max_tokens: 64, messages: user('[plain] say hello') });
  return { id: m.id, type: m.type, role: m.role, model: m.model, stop_reason: m.stop_reason,
           content: m.content, usage: usage(m.usage) };
}

async function tool() {
  const m = await client.messages.create({ model, max_tokens: 64, tools, messages: user('[tool] read the readme') });
  return { stop_reason: m.stop_reason, content: m.content };
}

async function streamText() {
  const deltas = [];
  const stream = client.messages.stream({ model, max_tokens: 64, messages: user('[stream-text] go') });
  stream.on('text', (d) => deltas.push(d));
  const m = await stream.finalMessage();
  return { deltas, text: m.content[0].text, stop_reason: m.stop_reason, usage: usage(m.usage) };
}

async function streamTool() {
  const partials = [];
  const stream = client.messages.stream({ model, max_tokens: 64, tools, messages: user('[stream-tool] write it') });
  stream.on('inputJson', (partial) => partials.push(partial));
  const m = await stream.finalMessage();
  return { partials, stop_reason: m.stop_reason, content: m.content };
}

async function streamThinking() {
  const thinking = [];
  const stream = client.messages.stream({
    model, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 },
    messages: user('[stream-thinking] ponder'),
  });
  stream.on('thinking', (d) => thinking.push(d));
  const m = await stream.finalMessage();
  return { thinking_deltas: thinking, content: m.content, stop_reason: m.stop_reason };
}

// A system text long enough for the fake's 1024-token cache minimum.
function longSystem() {
  let s = 'You are a careful coding agent working on a repository. ';
  for (let i = 0; i < 150; i++) s += `Rule ${i}: keep every edit small, tested and reviewed. `;
  return s;
}

async function cache() {
  // The static system text for an hour, the moving conversation end for 5
  // minutes (the API wants longer TTLs first).
  const system = [{ type: 'text', text: longSystem(), cache_control: { type: 'ephemeral', ttl: '1h' } }];
  const first = await client.messages.create({
    model, max_tokens: 64, system,
    messages: [{ role: 'user', content: [{ type: 'text', text: '[cache-1] first question', cache_control: { type: 'ephemeral' } }] }],
  });
  // The next turn: the last breakpoint moves to the new last message.
  const second = await client.messages.create({
    model, max_tokens: 64, system,
    messages: [
      { role: 'user', content: '[cache-1] first question' },
      { role: 'assistant', content: first.content[0].text },
      { role: 'user', content: [{ type: 'text', text: '[cache-2] second question', cache_control: { type: 'ephemeral' } }] },
    ],
  });
  return { first: usage(first.usage), second: usage(second.usage), second_text: second.content[0].text };
}

async function retried() {
  const m = await client.messages.create({ model, max_tokens: 64, messages: user('[overloaded] try') });
  return { text: m.content[0].text };
}

async function badRequest() {
  try {
    await client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] });
    return { thrown: false };
  } catch (e) {
    return { thrown: true, bad_request: e instanceof Anthropic.BadRequestError, status: e.status,
             type: e.error?.error?.type, message: e.error?.error?.message,
             request_id: e.requestID ?? null };
  }
}

async function streamError() {
  try {
    const stream = client.messages.stream({ model, max_tokens: 64, messages: user('[in-stream-error] go') });
    await stream.finalMessage();
    return { thrown: false };
  } catch (e) {
    return { thrown: true, api_error: e instanceof Anthropic.APIError, type: e.error?.error?.type };
  }
}

const out = {};
for (const [name, fn] of Object.entries({ plain, tool, streamText, streamTool, streamThinking, cache,
                                           retried, badRequest, streamError })) {
  try {
    out[name] = await fn();
  } catch (e) {
    out[name] = { unexpected_error: String(e?.message ?? e) };
  }
}
process.stdout.write(JSON.stringify(out) + '\n');
