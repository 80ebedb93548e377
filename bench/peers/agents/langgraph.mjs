// LangGraph.js: the prebuilt ReAct agent (createReactAgent) over ChatOpenAI,
// one tool, run with agent.stream(streamMode "messages"): LangGraph's token
// streaming, which makes ChatOpenAI stream the completion. (ChatOpenAI's own
// `streaming: true` is not used: its invoke path then estimates token counts
// with js-tiktoken, which downloads the encoding from tiktoken.pages.dev on
// first use, and this machine has no network.)
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { parseArgs, SYSTEM, TOOL_DESCRIPTION, makeReadFile, report } from './common.mjs';

const args = parseArgs();
const { read, state } = makeReadFile(args.fixture);
const readFileTool = tool(async ({ path }) => read(path), {
  name: 'ReadFile',
  description: TOOL_DESCRIPTION,
  schema: z.object({ path: z.string().describe('path relative to the workspace') }),
});
const llm = new ChatOpenAI({
  model: args.model,
  apiKey: 'sk-bench',
  configuration: { baseURL: args.baseUrl },
  maxRetries: 0,
});
const agent = createReactAgent({ llm, tools: [readFileTool], prompt: SYSTEM });
const stream = await agent.stream(
  { messages: [{ role: 'user', content: args.prompt }] },
  { recursionLimit: 10000, streamMode: ['messages', 'values'] },
);
let last;
for await (const [mode, chunk] of stream) if (mode === 'values') last = chunk;
report('langgraph', state, last?.messages.at(-1)?.content);
