// The official Google Gen AI client (@google/genai, pinned in package.json)
// against maestro-fakellm's Gemini generateContent fake (issue 50): if the
// SDK can send these requests and read these answers, the fake speaks the
// real wire format. Usage: node gemini_check.mjs <base_url> (the server root:
// the SDK adds /v1beta/models/... itself). Replies come from
// gemini_script.json, matched by the SDK-* marker of each request. Prints one
// JSON object of what the SDK saw; gemini_sdk_test.cc asserts it.
import { GoogleGenAI } from '@google/genai';

const ai = new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: process.argv[2] } });
const model = 'gemini-test';

const weather = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'The forecast for a city.',
      parameters: {
        type: 'OBJECT',
        properties: { city: { type: 'STRING' }, days: { type: 'INTEGER' } },
        required: ['city'],
      },
    },
  ],
};

// The usage figures a caller reads, as the SDK exposes them.
function usage(u) {
  if (!u) return null;
  return {
    prompt: u.promptTokenCount ?? null,
    cached: u.cachedContentTokenCount ?? null,
    candidates: u.candidatesTokenCount ?? null,
    thoughts: u.thoughtsTokenCount ?? null,
    total: u.totalTokenCount ?? null,
  };
}

async function text() {
  const r = await ai.models.generateContent({ model, contents: 'SDK-TEXT say hello' });
  return {
    text: r.text,
    finishReason: r.candidates[0].finishReason,
    modelVersion: r.modelVersion,
    usage: usage(r.usageMetadata),
  };
}

async function call() {
  const r = await ai.models.generateContent({
    model,
    contents: 'SDK-CALL what is the weather in Paris?',
    config: { systemInstruction: 'You answer with tools.', tools: [weather], temperature: 0 },
  });
  return { functionCalls: r.functionCalls, finishReason: r.candidates[0].finishReason };
}

async function stream() {
  const chunks = [];
  let last = null;
  for await (const c of await ai.models.generateContentStream({
    model,
    contents: 'SDK-STREAM-TEXT tell me',
  })) {
    chunks.push(c.text);
    last = c;
  }
  return {
    chunks,
    finishReason: last.candidates[0].finishReason,
    usage: usage(last.usageMetadata),
  };
}

async function streamCall() {
  const thoughts = [];
  const calls = [];
  let last = null;
  for await (const c of await ai.models.generateContentStream({
    model,
    contents: [{ role: 'user', parts: [{ text: 'SDK-STREAM-CALL and in Oslo?' }] }],
    config: { tools: [weather] },
  })) {
    for (const p of c.candidates[0].content.parts) if (p.thought) thoughts.push(p.text);
    if (c.functionCalls) calls.push(...c.functionCalls);
    last = c;
  }
  return { thoughts, functionCalls: calls, usage: usage(last.usageMetadata) };
}

// Two turns of one conversation behind a long system instruction: the second
// reads the first's prefix from the implicit cache.
async function cache() {
  const systemInstruction = 'You are a careful agent; follow the house rules. '.repeat(200);
  const first = await ai.models.generateContent({
    model,
    contents: [{ role: 'user', parts: [{ text: 'SDK-CACHE one' }] }],
    config: { systemInstruction },
  });
  const second = await ai.models.generateContent({
    model,
    contents: [
      { role: 'user', parts: [{ text: 'SDK-CACHE one' }] },
      { role: 'model', parts: [{ text: first.text }] },
      { role: 'user', parts: [{ text: 'SDK-CACHE two' }] },
    ],
    config: { systemInstruction },
  });
  return {
    first: usage(first.usageMetadata),
    second: usage(second.usageMetadata),
    texts: [first.text, second.text],
  };
}

// An OpenAI habit the real API refuses: role "assistant".
async function invalid() {
  try {
    await ai.models.generateContent({
      model,
      contents: [{ role: 'assistant', parts: [{ text: 'SDK-INVALID' }] }],
    });
    return { thrown: false };
  } catch (e) {
    return { thrown: true, name: e.name, status: e.status, message: e.message };
  }
}

const out = {
  text: await text(),
  call: await call(),
  stream: await stream(),
  streamCall: await streamCall(),
  cache: await cache(),
  invalid: await invalid(),
};
console.log(JSON.stringify(out));
