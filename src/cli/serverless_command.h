// Serverless Functions from the command line (docs/serverless.md):
//   minik8s function deploy NAME --file handler.py|bundle.zip [--handler mod.fn] [-n NS]
//                           [--min-scale N] [--max-scale N] [--target-concurrency N]
//                           [--scale-to-zero-after 30s] [--timeout S]
//   minik8s function invoke NAME [--data JSON|@file] [-n NS]   POST through the gateway
//   minik8s function delete NAME [-n NS] | list [-n NS]
//   minik8s serverless-gateway [--listen ADDR]                  what the gateway's pod runs
// deploy checks the code locally with python3 first (a syntax error is refused with Python's
// message and line, a missing handler function by name, a zip whose members leave it or over
// 1 MB), stores it in the ConfigMap NAME-code and creates or updates the Function.
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

void addServerlessCommands(CLI::App& app);

}  // namespace minik8s::cli
