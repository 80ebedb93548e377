// Vercel AI SDK: streamText with one tool, looping until the model stops
// calling tools, on the OpenAI-compatible provider.
import { streamText, tool, stepCountIs } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';
import { parseArgs, SYSTEM, TOOL_DESCRIPTION, makeReadFile, report } from './common.mjs';

const args = parseArgs();
const { read, state } = makeReadFile(args.fixture);
const provider = createOpenAICompatible({ name: 'bench', baseURL: args.baseUrl, apiKey: 'sk-bench' });
const result = streamText({
  model: provider(args.model),
  system: SYSTEM,
  prompt: args.prompt,
  maxRetries: 0,
  stopWhen: stepCountIs(10000),
  tools: {
    ReadFile: tool({
      description: TOOL_DESCRIPTION,
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => read(path),
    }),
  },
});
for await (const _ of result.fullStream) { /* drain the stream */ }
report('vercel-ai', state, await result.text);
