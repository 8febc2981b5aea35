// The extension's activation and deactivation under node, with the `vscode` and `vscode-languageclient`
// modules replaced by recording fakes (neither is installed here: VS Code provides the first, npm the second).
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const Module = require('node:module');
const path = require('node:path');

// `settings`: the user's; `workspace`: what a workspace's .vscode/settings.json says (VS Code's `get` prefers it).
function configuration(section, settings, workspace = {}) {
  const key = (name) => `${section}.${name}`;
  return {
    get: (name) => (key(name) in workspace ? workspace[key(name)] : settings[key(name)]),
    inspect: (name) => ({ key: key(name), globalValue: settings[key(name)], workspaceValue: workspace[key(name)] }),
  };
}

function load(settings, workspace = {}) {
  const calls = { clients: [], commands: {}, started: 0, stopped: 0, restarted: 0 };
  class LanguageClient {
    constructor(id, name, server, client) {
      Object.assign(this, { id, name, server, client });
      calls.clients.push(this);
    }
    async start() { calls.started += 1; }
    async stop() { calls.stopped += 1; }
    async restart() { calls.restarted += 1; }
  }
  const fakes = {
    vscode: {
      workspace: { getConfiguration: (section) => configuration(section, settings, workspace) },
      commands: {
        registerCommand: (name, handler) => {
          calls.commands[name] = handler;
          return { dispose() {} };
        },
      },
    },
    'vscode-languageclient/node': { LanguageClient, TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 } },
  };
  const original = Module._load;
  Module._load = function (request, parent, isMain) {
    if (Object.prototype.hasOwnProperty.call(fakes, request)) {
      return fakes[request];
    }
    return original.call(this, request, parent, isMain);
  };
  const file = path.join(__dirname, '..', 'extension.js');
  delete require.cache[require.resolve(file)];
  try {
    return { extension: require(file), calls };
  } finally {
    Module._load = original;
  }
}

test('activate starts `vllmlint server` over stdio for YAML, JSON, Compose, Dockerfile, shell and Markdown', async () => {
  const { extension, calls } = load({ 'vllmlint.path': '/venv/bin/vllmlint', 'vllmlint.args': [], 'vllmlint.debounce': 120 });
  const context = { subscriptions: [] };
  const client = await extension.activate(context);
  assert.strictEqual(calls.clients.length, 1);
  assert.strictEqual(client, calls.clients[0]);
  assert.strictEqual(client.id, 'vllmlint');
  assert.deepStrictEqual(client.server.run, { command: '/venv/bin/vllmlint', args: ['server'], transport: 0 });
  assert.deepStrictEqual(client.server.debug, client.server.run);
  assert.deepStrictEqual(client.client.documentSelector.map((s) => s.language), ['yaml', 'json', 'dockercompose', 'dockerfile', 'shellscript', 'markdown']);
  assert.ok(client.client.documentSelector.every((s) => s.scheme === 'file'));
  assert.deepStrictEqual(client.client.initializationOptions, { debounce: 120 });
  assert.strictEqual(calls.started, 1);
  assert.strictEqual(context.subscriptions.length, 1);

  await calls.commands['vllmlint.restart']();
  assert.strictEqual(calls.restarted, 1);

  await extension.deactivate();
  assert.strictEqual(calls.stopped, 1);
  await extension.deactivate(); // a second deactivate has nothing left to stop
  assert.strictEqual(calls.stopped, 1);
});

test('a Python interpreter as the program: the args go before `server`', async () => {
  const { extension } = load({ 'vllmlint.path': 'python3', 'vllmlint.args': ['-m', 'vllmlint'] });
  const options = extension.serverOptions({ get: (key) => ({ path: 'python3', args: ['-m', 'vllmlint'] })[key] });
  assert.deepStrictEqual(options.run.args, ['-m', 'vllmlint', 'server']);
  const defaults = extension.serverOptions({ get: () => undefined });
  assert.deepStrictEqual(defaults.run, { command: 'vllmlint', args: ['server'], transport: 0 });
});

test("a workspace's settings do not choose the program or its arguments", async () => {
  const { extension, calls } = load({ 'vllmlint.path': '/venv/bin/vllmlint' },
    { 'vllmlint.path': './evil.sh', 'vllmlint.args': ['-c', 'touch /tmp/pwned'] });
  const client = await extension.activate({ subscriptions: [] });
  assert.deepStrictEqual(client.server.run, { command: '/venv/bin/vllmlint', args: ['server'], transport: 0 });
  assert.strictEqual(calls.clients.length, 1);
  await extension.deactivate();
  const { extension: fresh } = load({}, { 'vllmlint.path': './evil.sh' });
  const client2 = await fresh.activate({ subscriptions: [] });
  assert.strictEqual(client2.server.run.command, 'vllmlint'); // the default, not the workspace's
  await fresh.deactivate();
});

test('disabled in the settings: no server is started', async () => {
  const { extension, calls } = load({ 'vllmlint.enable': false });
  assert.strictEqual(await extension.activate({ subscriptions: [] }), undefined);
  assert.strictEqual(calls.clients.length, 0);
  assert.strictEqual(await extension.deactivate(), undefined);
});
