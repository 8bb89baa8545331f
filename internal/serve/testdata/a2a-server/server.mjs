// The A2A agent the serve package's tests call: a real @a2a-js/sdk server
// (A2A 1.0 over JSON-RPC) behind express, listening on 127.0.0.1 on a free
// port that it prints on standard output as its base URL.
//
// It serves one echo agent twice:
//
//   <base>/v1   speaks A2A 1.0 only; its card lists one JSONRPC 1.0 interface
//   <base>/v03  speaks A2A 0.3 too (the SDK's compat layer) and serves the
//               card of an agent that speaks only 0.3
//
// The agent answers a message whose text starts with "direct:" with a plain
// message, "slow" with a task that works until it is canceled, and anything
// else with a task that reports two working updates, an artifact "echo:
// <text>" and completes. Replies name the tenant of the request when there
// is one.
//
// Flags: --token T requires "Authorization: Bearer T"; --header NAME=VALUE
// requires that header too (on every route, the card included).
import express from 'express';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { Role, TaskState } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';

const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const token = flag('--token');
const header = flag('--header');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const textPart = (text) => ({ content: { $case: 'text', value: text }, metadata: {}, filename: '', mediaType: 'text/plain' });

const agentMessage = (text, taskId, contextId) => ({
  messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT,
  parts: [textPart(text)], metadata: {}, extensions: [], referenceTaskIds: [],
});

const textOf = (message) =>
  (message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

// EchoExecutor is the agent.
class EchoExecutor {
  constructor() {
    this.canceled = new Set();
  }

  async execute(ctx, bus) {
    const text = textOf(ctx.userMessage);
    const tenant = ctx.context?.tenant ? ` (tenant ${ctx.context.tenant})` : '';
    const { taskId, contextId } = ctx;
    if (text.startsWith('direct:')) {
      bus.publish(AgentEvent.message(agentMessage(`echo: ${text.slice(7).trim()}${tenant}`, '', contextId)));
      bus.finished();
      return;
    }
    const status = (state, msg) => ({
      state, message: msg === undefined ? undefined : agentMessage(msg, taskId, contextId), timestamp: new Date().toISOString(),
    });
    if (!ctx.task) {
      bus.publish(AgentEvent.task({
        id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [ctx.userMessage], metadata: {},
      }));
    }
    if (text.startsWith('slow')) {
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING, 'working slowly'), metadata: {} }));
      // Work until canceled (the test cancels), at most a minute.
      for (let i = 0; i < 1200 && !this.canceled.has(taskId); i++) {
        await sleep(50);
      }
      if (!this.canceled.has(taskId)) {
        bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_FAILED, 'nobody canceled me'), metadata: {} }));
      }
      bus.finished();
      return;
    }
    for (const step of ['reading the message', 'writing the echo']) {
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING, step), metadata: {} }));
      await sleep(20);
    }
    bus.publish(AgentEvent.artifactUpdate({
      taskId, contextId, append: false, lastChunk: true, metadata: {},
      artifact: { artifactId: randomUUID(), name: 'echo', description: '', parts: [textPart(`echo: ${text}${tenant}`)], metadata: {}, extensions: [] },
    }));
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED, 'done'), metadata: {} }));
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    this.canceled.add(taskId);
    bus.publish(AgentEvent.statusUpdate({
      taskId, contextId: '', metadata: {},
      status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
    }));
    bus.finished();
  }
}

const app = express();
app.use((req, res, next) => {
  if (token && req.get('authorization') !== `Bearer ${token}`) {
    res.status(401).json({ error: 'unauthorized' });
    return;
  }
  if (header) {
    const [name, value] = header.split('=');
    if (req.get(name) !== value) {
      res.status(403).json({ error: `missing header ${name}` });
      return;
    }
  }
  next();
});

const server = app.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  for (const [prefix, legacy] of [['/v1', false], ['/v03', true]]) {
    const interfaces = [{ url: `${base}${prefix}/rpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }];
    if (legacy) {
      interfaces.push({ url: `${base}${prefix}/rpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' });
    }
    const card = {
      name: 'Echo Agent',
      description: 'Echoes what it is told.',
      version: '1.0.0',
      supportedInterfaces: interfaces,
      capabilities: { streaming: true, pushNotifications: false, extensions: [] },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'echo', name: 'Echo', description: 'Repeats the message.', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
      signatures: [],
    };
    const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor());
    const compat = legacy ? { legacyCompat: { enabled: true } } : {};
    if (legacy) {
      // The card of an agent that speaks only A2A 0.3 (as @a2a-js/sdk 0.3
      // served it): no supportedInterfaces, the endpoint in url.
      app.get(`${prefix}/.well-known/agent-card.json`, (req, res) => res.json({
        name: card.name, description: card.description, version: card.version,
        url: `${base}${prefix}/rpc`, preferredTransport: 'JSONRPC', protocolVersion: '0.3.0',
        capabilities: { streaming: true, pushNotifications: false },
        defaultInputModes: card.defaultInputModes, defaultOutputModes: card.defaultOutputModes,
        skills: card.skills.map(({ id, name, description, tags }) => ({ id, name, description, tags })),
      }));
    } else {
      app.use(`${prefix}/.well-known/agent-card.json`, agentCardHandler({ agentCardProvider: handler }));
    }
    app.use(`${prefix}/rpc`, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, ...compat }));
  }
  process.stdout.write(`${base}\n`);
});

// Stop when the test closes standard input or signals.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
