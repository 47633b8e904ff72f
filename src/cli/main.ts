#!/usr/bin/env node
// The `oooi` command line.
import { buildProgram } from "./program.js";

await buildProgram().parseAsync(process.argv);
