// Mastra: an Agent with one createTool tool on Mastra's OpenAI-compatible
// model config, agent.stream() (its default streaming call).
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { parseArgs, SYSTEM, TOOL_DESCRIPTION, makeReadFile, report } from './common.mjs';

const args = parseArgs();
const { read, state } = makeReadFile(args.fixture);
const readFileTool = createTool({
  id: 'ReadFile',
  description: TOOL_DESCRIPTION,
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ context }) => read(context.path),
});
const agent = new Agent({
  name: 'bench',
  instructions: SYSTEM,
  model: { providerId: 'bench', modelId: args.model, url: args.baseUrl, apiKey: 'sk-bench' },
  tools: { ReadFile: readFileTool },
});
const stream = await agent.stream(args.prompt, { maxSteps: 10000, modelSettings: { maxRetries: 0 } });
for await (const _ of stream.fullStream) { /* drain the stream */ }
report('mastra', state, await stream.text);
