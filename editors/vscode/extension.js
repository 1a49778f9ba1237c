// Starts `warplint server` for CUDA files and passes the settings on.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("warplint");
  const command = config.get("path", "warplint");
  client = new LanguageClient(
    "warplint",
    "warplint",
    { command, args: ["server"] },
    {
      documentSelector: [
        { scheme: "file", language: "cuda-cpp" },
        { scheme: "file", pattern: "**/*.{cu,cuh}" },
      ],
      initializationOptions: { settings: config.get("settings", {}) },
      synchronize: { configurationSection: "warplint" },
    }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
