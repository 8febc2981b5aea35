// vllmlint for VS Code: starts `vllmlint server` (the language server; vllmlint is not on PyPI: install it
// from a checkout or a wheel built from one, `pip install '/path/to/vllmlint[server]'`) over stdio with
// vscode-languageclient. Everything vllmlint says comes from the server; this file only
// starts and stops it.
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

// The languages whose documents the server lints: YAML and JSON manifests, Compose files (VS Code's
// `dockercompose` language when the Docker extension gives them that one), Dockerfiles (`dockerfile`), shell
// scripts, Markdown runbooks.
const LANGUAGES = ['yaml', 'json', 'dockercompose', 'dockerfile', 'shellscript', 'markdown'];

// The program and its arguments come from the user's (or remote machine's) settings only: package.json
// scopes them `machine`, and a value a workspace's .vscode/settings.json gives is ignored here too, so an
// opened repository cannot choose what VS Code runs.
function machineSetting(config, key) {
  if (typeof config.inspect !== 'function') {
    return config.get(key);
  }
  const inspected = config.inspect(key) || {};
  return inspected.globalValue !== undefined ? inspected.globalValue : inspected.defaultValue;
}

function serverOptions(config) {
  const command = machineSetting(config, 'path') || 'vllmlint';
  const args = [...(machineSetting(config, 'args') || []), 'server'];
  // TransportKind.stdio: the client adds `--stdio`, which `vllmlint server` accepts.
  const executable = { command, args, transport: TransportKind.stdio };
  return { run: executable, debug: executable };
}

function clientOptions(config) {
  return {
    documentSelector: LANGUAGES.map((language) => ({ scheme: 'file', language })),
    // The server registers its own watchers (configuration files, manifests) when the client allows it.
    initializationOptions: { debounce: config.get('debounce') },
  };
}

async function activate(context) {
  const config = vscode.workspace.getConfiguration('vllmlint');
  if (config.get('enable') === false) {
    return undefined;
  }
  client = new LanguageClient('vllmlint', 'vllmlint', serverOptions(config), clientOptions(config));
  context.subscriptions.push(vscode.commands.registerCommand('vllmlint.restart', async () => {
    if (client) {
      await client.restart();
    }
  }));
  await client.start();
  return client;
}

async function deactivate() {
  if (!client) {
    return undefined;
  }
  const stopping = client;
  client = undefined;
  return stopping.stop();
}

module.exports = { activate, deactivate, serverOptions, clientOptions };
