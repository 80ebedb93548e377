// OpenAI Agents SDK (JS): Agent + run() on the Chat Completions model,
// streamed, tracing off (it would export to OpenAI).
import OpenAI from 'openai';
import { Agent, run, tool, setTracingDisabled, OpenAIChatCompletionsModel } from '@openai/agents';
import { z } from 'zod';
import { parseArgs, SYSTEM, TOOL_DESCRIPTION, makeReadFile, report } from './common.mjs';

setTracingDisabled(true);
const args = parseArgs();
const { read, state } = makeReadFile(args.fixture);
const client = new OpenAI({ baseURL: args.baseUrl, apiKey: 'sk-bench', maxRetries: 0 });
const agent = new Agent({
  name: 'bench',
  instructions: SYSTEM,
  model: new OpenAIChatCompletionsModel(client, args.model),
  tools: [tool({
    name: 'ReadFile',
    description: TOOL_DESCRIPTION,
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) => read(path),
  })],
});
const result = await run(agent, args.prompt, { stream: true, maxTurns: 10000 });
for await (const _ of result) { /* drain the stream */ }
await result.completed;
report('openai-agents', state, result.finalOutput);
