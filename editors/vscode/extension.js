// vllmlint for VS Code: starts `vllmlint server` (the language server of `pip install 'vllmlint[server]'`)
// over stdio with vscode-languageclient. Everything vllmlint says comes from the server; this file only
// starts and stops it.
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

// The languages whose documents the server lints (YAML and JSON manifests, shell scripts, Markdown runbooks).
const LANGUAGES = ['yaml', 'json', 'shellscript', 'markdown'];

function serverOptions(config) {
  const command = config.get('path') || 'vllmlint';
  const args = [...(config.get('args') || []), 'server'];
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
