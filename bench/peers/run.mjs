#!/usr/bin/env node
// bench/peers driver: maestro (`maestro run`) against four agent frameworks on
// the same task and the same scripted fake LLM (maestro-fakellm), interleaved,
// with one table at the end. See README.md beside this file.
//
//   node bench/peers/run.mjs [--runs 5] [--warmup 1]
//        [--scenarios bench-1-4000,bench-50-4000,bench-1-40000,bench-50-40000]
//        [--frameworks maestro,langgraph,openai-agents,vercel-ai,mastra]
//        [--maestro PATH] [--fakellm PATH] [--json OUT] [--keep]
//
// Scenario bench-N-S: N tool iterations, each a ReadFile of a different
// S-byte file, then a final answer. One maestro-fakellm per scenario on
// 127.0.0.1 (a free port) answers every request from a script that matches on
// message content: the request whose newest file marker is END-OF-F<k> gets a
// ReadFile call of file k+1; after file N the final answer (a `complete` call
// when the request offers maestro's `complete` tool, text otherwise).
//
// Every run is one process under ./rusage (wait4): CPU = user + sys of the
// process and its waited-for children, peak RSS of its largest process.
// The fake's prompt cache (one slot, like llama-server --parallel 1) gives
// prefix retention: for each request after the first of a run, how much of
// the previous request's prompt is a prefix of this one.
import { spawn, execFileSync } from 'node:child_process';
import {
  mkdirSync, writeFileSync, readFileSync, readdirSync, linkSync, rmSync, watch, existsSync, mkdtempSync,
} from 'node:fs';
import { tmpdir, cpus, release } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');

// ---- options ----
const opt = {
  runs: 5,
  warmup: 1,
  scenarios: 'bench-1-4000,bench-50-4000,bench-1-40000,bench-50-40000',
  frameworks: 'maestro,langgraph,openai-agents,vercel-ai,mastra',
  maestro: join(repo, 'build/release/src/cli/maestro'),
  fakellm: join(repo, 'build/release/src/fakellm/maestro-fakellm'),
  json: '',
  keep: false,
  timeout: 600,
};
for (let i = 2; i < process.argv.length; i++) {
  const k = process.argv[i].replace(/^--/, '');
  if (k === 'keep') { opt.keep = true; continue; }
  if (k === 'help' || !(k in opt)) {
    console.error('usage: run.mjs [--runs R] [--warmup W] [--scenarios bench-N-S,...] ' +
      '[--frameworks maestro,langgraph,openai-agents,vercel-ai,mastra] [--maestro PATH] ' +
      '[--fakellm PATH] [--json OUT] [--timeout S] [--keep]');
    process.exit(k === 'help' ? 0 : 2);
  }
  const v = process.argv[++i];
  opt[k] = typeof opt[k] === 'number' ? Number(v) : v;
}
const scenarios = opt.scenarios.split(',').map((name) => {
  const m = /^bench-(\d+)-(\d+)$/.exec(name);
  if (!m) throw new Error(`bad scenario ${name} (want bench-N-S)`);
  return { name, n: Number(m[1]), s: Number(m[2]) };
});
const AGENTS = {
  langgraph: 'agents/langgraph.mjs',
  'openai-agents': 'agents/openai_agents.mjs',
  'vercel-ai': 'agents/vercel_ai.mjs',
  mastra: 'agents/mastra.mjs',
};
const frameworks = opt.frameworks.split(',');
for (const f of frameworks) {
  if (f !== 'maestro' && !AGENTS[f]) throw new Error(`unknown framework ${f}`);
}
for (const bin of [opt.fakellm, ...(frameworks.includes('maestro') ? [opt.maestro] : [])]) {
  if (!existsSync(bin)) {
    console.error(`missing ${bin}: cmake --preset release && cmake --build --preset release ` +
      '--target maestro maestro-fakellm');
    process.exit(2);
  }
}

const work = mkdtempSync(join(tmpdir(), 'maestro-bench-peers-'));
const rusage = join(work, 'rusage');
execFileSync('cc', ['-O2', '-o', rusage, join(here, 'rusage.c')]);

const PROMPT = 'BENCH-TASK-START Read the files the tools point you to, one after the other, ' +
  'then answer "done".';
const pad = (k) => String(k).padStart(4, '0');
const fileName = (k) => `f${pad(k)}.txt`;
const endMarker = (k) => `END-OF-F${pad(k)}`;

// ---- fixture: N files of exactly S bytes of source-like text ----
function makeFixture(dir, n, s) {
  mkdirSync(dir, { recursive: true });
  const words = ['int', 'return', 'const', 'auto', 'value', 'result', 'status', 'size_t', 'std::string',
    'for', 'if', 'else', 'while', 'buffer', 'offset', 'length', 'count', 'index', 'error', 'message',
    'request', 'response', 'json', 'token', 'prompt', 'cache', 'slot', 'thread', 'mutex', 'lock'];
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let k = 1; k <= n; k++) {
    const head = `// START-OF-F${pad(k)} (file ${k} of ${n})\n`;
    const tail = `// ${endMarker(k)}\n`;
    let body = '';
    while (head.length + body.length + tail.length < s) {
      let line = '  ';
      const w = 4 + Math.floor(rnd() * 8);
      for (let i = 0; i < w; i++) line += words[Math.floor(rnd() * words.length)] + (i + 1 < w ? ' ' : ';');
      body += line + '\n';
    }
    body = body.slice(0, Math.max(0, s - head.length - tail.length - 1)) + '\n';
    writeFileSync(join(dir, fileName(k)), head + body + tail);
  }
}

// ---- the fake's script ----
function makeScript(n) {
  const readCall = (k) => [{ name: 'ReadFile', arguments: { path: fileName(k) } }];
  const replies = [
    { match: { any_message_contains: endMarker(n), tool_offered: 'complete' }, repeat: 0,
      tool_calls: [{ name: 'complete', arguments: { status: 'success', result: 'done' } }] },
    { match: { any_message_contains: endMarker(n) }, repeat: 0, text: 'done' },
  ];
  for (let k = n; k >= 2; k--) {
    replies.push({ match: { any_message_contains: endMarker(k - 1) }, repeat: 0, tool_calls: readCall(k) });
  }
  // maestro's first reply waits 50 ms (idle, no CPU) so that the driver has
  // linked the fixture into its fresh task workspace (see linkWorkspace).
  replies.push({ match: { any_message_contains: 'BENCH-TASK-START', tool_offered: 'complete' }, repeat: 0,
    delay_ms: 50, tool_calls: readCall(1) });
  replies.push({ match: { any_message_contains: 'BENCH-TASK-START' }, repeat: 0, tool_calls: readCall(1) });
  return { replies, default: { text: 'unexpected request' } };
}

async function startFake(scriptPath) {
  const p = spawn(opt.fakellm, ['--host', '127.0.0.1', '--port', '0', '--script', scriptPath,
    '--slots', '1', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((res, rej) => {
    const rl = createInterface({ input: p.stdout });
    rl.once('line', res);
    p.once('exit', (c) => rej(new Error(`maestro-fakellm exited ${c}`)));
  });
  const m = /^listening (\S+):(\d+)$/.exec(line);
  if (!m) throw new Error(`maestro-fakellm said: ${line}`);
  return { proc: p, url: `http://127.0.0.1:${m[2]}` };
}

// ---- maestro's side: a data dir with a one-movement piece offering ReadFile ----
function maestroDataDir(runDir, n) {
  const data = join(runDir, 'data');
  mkdirSync(join(data, 'pieces'), { recursive: true });
  mkdirSync(join(data, 'workspaces', 'tasks'), { recursive: true });
  writeFileSync(join(data, 'pieces', 'bench.yaml'), [
    'name: bench',
    'description: bench/peers - read the files the tools point to, then complete.',
    'movements:',
    '  - name: read',
    '    guidance: |',
    '      Use the ReadFile tool to read files of the workspace; when you have what you',
    '      need, call `complete` with status "success" and your answer as the result.',
    '    allowed_tools: [ReadFile]',
    `    max_iterations: ${n + 20}`,
    '    rules: []',
    '',
  ].join('\n'));
  return data;
}

// `maestro run` has no space option: its task works in a fresh ephemeral
// workspace <data>/workspaces/tasks/<task id>. The driver hard-links the
// fixture files into it the moment it appears (inotify), with a .gitignore of
// `*` so that the job's commit of the workspace does not hash the fixture (a
// real space would hold it committed already).
function linkWorkspace(data, fixture) {
  const tasks = join(data, 'workspaces', 'tasks');
  const state = { linked: 0 };
  const w = watch(tasks, (ev, name) => {
    if (!name || state.linked) return;
    const ws = join(tasks, name);
    try {
      for (const f of readdirSync(fixture)) linkSync(join(fixture, f), join(ws, f));
      writeFileSync(join(ws, '.gitignore'), '*\n');
      state.linked = 1;
    } catch { /* not there yet: the next event */ }
  });
  state.close = () => w.close();
  return state;
}

function runProcess(argv, env, cwd, outFile) {
  return new Promise((res) => {
    const p = spawn(rusage, [outFile, ...argv], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => p.kill('SIGKILL'), opt.timeout * 1000);
    p.on('exit', () => {
      clearTimeout(timer);
      let ru = null;
      try { ru = JSON.parse(readFileSync(outFile, 'utf8')); } catch { /* killed */ }
      res({ out, err, ru });
    });
  });
}

async function fakeRequests(url) {
  const r = await fetch(`${url}/v1/_requests`);
  const j = await r.json();
  await fetch(`${url}/v1/_requests`, { method: 'DELETE' });
  return j.requests.map((q) => ({ reply: q.reply, status: q.status, cache: q.cache, bytes: q.body_bytes }));
}

// Share of request i-1's prompt that is a prefix of request i's, from the
// one-slot cache: cache_n = common prefix with (previous prompt + generated)
// minus the one token llama-server re-evaluates.
function prefixKept(reqs) {
  const shares = [];
  for (let i = 1; i < reqs.length; i++) {
    const prev = reqs[i - 1].cache, cur = reqs[i].cache;
    if (!prev || !cur || !prev.prompt_tokens) continue;
    shares.push(Math.min(1, (cur.cache_n + 1) / prev.prompt_tokens));
  }
  return shares;
}

async function oneRun(fw, sc, fake, fixture, runIdx) {
  const runDir = join(work, sc.name, `${fw}-${runIdx}`);
  mkdirSync(runDir, { recursive: true });
  const ruFile = join(runDir, 'rusage.json');
  const baseUrl = `${fake.url}/v1`;
  await fetch(`${fake.url}/v1/_requests`, { method: 'DELETE' });
  let res, link;
  if (fw === 'maestro') {
    const data = maestroDataDir(runDir, sc.n);
    link = linkWorkspace(data, fixture);
    const env = {
      PATH: process.env.PATH, HOME: runDir, TMPDIR: runDir,
      MAESTRO_DATA_DIR: data, MAESTRO_LLM_BASE_URL: baseUrl, MAESTRO_LLM_MODEL: 'fake-model',
      MAESTRO_LLM_API_KEY: 'sk-bench', MAESTRO_LLM_CONTEXT_LENGTH: '10000000', MAESTRO_LOG_LEVEL: 'warn',
    };
    res = await runProcess([opt.maestro, 'run', '--piece', 'bench', PROMPT], env, runDir, ruFile);
    link.close();
  } else {
    const env = { PATH: process.env.PATH, HOME: runDir, TMPDIR: runDir, OPENAI_AGENTS_DISABLE_TRACING: '1' };
    res = await runProcess([process.execPath, join(here, AGENTS[fw]), '--base-url', baseUrl,
      '--fixture', fixture, '--prompt', PROMPT], env, here, ruFile);
  }
  const reqs = await fakeRequests(fake.url);
  const finalReplies = new Set([0, 1]);
  const done = reqs.length === sc.n + 1 && finalReplies.has(reqs.at(-1)?.reply) &&
    reqs.every((q) => q.status === 200 && q.reply !== -1);
  let iterations = reqs.length - 1;
  if (fw !== 'maestro') {
    try { iterations = JSON.parse(res.out.trim().split('\n').at(-1)).iterations; } catch { iterations = -1; }
  }
  const ok = done && res.ru && res.ru.exit === 0 && iterations === sc.n && (!link || link.linked);
  if (!ok) {
    console.error(`!! ${fw} ${sc.name} run ${runIdx}: exit=${res.ru?.exit} requests=${reqs.length} ` +
      `last reply=${reqs.at(-1)?.reply} iterations=${iterations}${link && !link.linked ? ' (workspace not linked)' : ''}`);
    console.error(res.err.slice(-2000));
  }
  if (!opt.keep) rmSync(runDir, { recursive: true, force: true });
  return {
    framework: fw, scenario: sc.name, n: sc.n, s: sc.s, run: runIdx, ok,
    cpu_ms: res.ru ? (res.ru.user_s + res.ru.sys_s) * 1000 : NaN,
    user_ms: res.ru ? res.ru.user_s * 1000 : NaN,
    sys_ms: res.ru ? res.ru.sys_s * 1000 : NaN,
    rss_mb: res.ru ? res.ru.maxrss_kb / 1024 : NaN,
    wall_ms: res.ru ? res.ru.wall_s * 1000 : NaN,
    requests: reqs.length,
    prefix_kept: prefixKept(reqs),
  };
}

const median = (xs) => {
  const a = xs.filter((x) => Number.isFinite(x)).sort((p, q) => p - q);
  if (!a.length) return NaN;
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};

// ---- main ----
const results = [];
const fakes = [];
process.on('exit', () => { for (const f of fakes) f.proc.kill('SIGTERM'); });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

console.error(`bench/peers: work dir ${work}; ${opt.runs} runs (+${opt.warmup} warm-up) per framework ` +
  `and scenario, interleaved; node ${process.version}, ${cpus().length} CPUs, Linux ${release()}`);
for (const sc of scenarios) {
  const dir = join(work, sc.name);
  const fixture = join(dir, 'fixture');
  makeFixture(fixture, sc.n, sc.s);
  const scriptPath = join(dir, 'script.json');
  writeFileSync(scriptPath, JSON.stringify(makeScript(sc.n), null, 1));
  const fake = await startFake(scriptPath);
  fakes.push(fake);
  for (let r = -opt.warmup; r < opt.runs; r++) {
    // Rotate the order every round so no framework always runs first.
    const rot = ((r % frameworks.length) + frameworks.length) % frameworks.length;
    const order = [...frameworks.slice(rot), ...frameworks.slice(0, rot)];
    for (const fw of order) {
      const one = await oneRun(fw, sc, fake, fixture, r);
      if (r >= 0) results.push(one);
      console.error(`${sc.name} ${r < 0 ? 'warm-up' : `run ${r + 1}/${opt.runs}`} ${fw.padEnd(13)} ` +
        `cpu ${one.cpu_ms.toFixed(1)} ms  rss ${one.rss_mb.toFixed(1)} MB  wall ${one.wall_ms.toFixed(0)} ms` +
        `  requests ${one.requests}${one.ok ? '' : '  FAILED'}`);
    }
  }
  fake.proc.kill('SIGTERM');
}

// ---- the table ----
const rows = [];
const stat = {};
for (const fw of frameworks) {
  for (const sc of scenarios) {
    const rs = results.filter((x) => x.framework === fw && x.scenario === sc.name && x.ok);
    const kept = rs.flatMap((x) => x.prefix_kept);
    stat[`${fw}/${sc.name}`] = {
      fw, sc, okRuns: rs.length,
      cpu: median(rs.map((x) => x.cpu_ms)),
      rss: median(rs.map((x) => x.rss_mb)),
      wall: median(rs.map((x) => x.wall_ms)),
      kept: kept.length ? kept.reduce((a, b) => a + b, 0) / kept.length : NaN,
      keptMin: kept.length ? Math.min(...kept) : NaN,
    };
  }
}
const marginal = (fw, sc) => {
  const one = scenarios.find((x) => x.n === 1 && x.s === sc.s);
  if (!one || sc.n <= 1) return NaN;
  return (stat[`${fw}/${sc.name}`].cpu - stat[`${fw}/${one.name}`].cpu) / (sc.n - 1);
};
const f1 = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const ratio = (x, m) => (Number.isFinite(x) && Number.isFinite(m) && m > 0 ? `${(x / m).toFixed(1)}×` : '—');
for (const sc of scenarios) {
  for (const fw of frameworks) {
    const s = stat[`${fw}/${sc.name}`], m = stat[`maestro/${sc.name}`];
    const marg = marginal(fw, sc), mMarg = m ? marginal('maestro', sc) : NaN;
    rows.push([
      fw, sc.name, `${s.okRuns}/${opt.runs}`, f1(s.cpu), f1(s.cpu / sc.n, 2), f1(marg, 2),
      f1(s.rss), m ? ratio(s.cpu, m.cpu) : '—', m ? ratio(marg, mMarg) : '—', m ? ratio(s.rss, m.rss) : '—',
      Number.isFinite(s.kept) ? `${(100 * s.kept).toFixed(1)} (min ${(100 * s.keptMin).toFixed(1)})` : '—',
    ]);
  }
}
const header = ['framework', 'scenario', 'ok runs', 'CPU ms (run)', 'CPU ms/iter', 'marginal ms/iter',
  'max RSS MB', 'CPU ×maestro', 'marginal ×maestro', 'RSS ×maestro', 'prefix kept % (min)'];
const table = [header, header.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
console.log(table);
if (opt.json) {
  writeFileSync(opt.json, JSON.stringify({ options: opt, node: process.version, results }, null, 1));
}
if (!opt.keep) rmSync(work, { recursive: true, force: true });
