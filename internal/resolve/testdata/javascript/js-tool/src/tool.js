import { fetch } from "agentc:http";
import * as fs from "agentc:fs";
import kv from "agentc:kv";

// Module-level code may touch the agentc modules; while agentform reads the
// tool definition they are inert stubs.
const client = fetch.bind(null);
fs.configure({ root: "/" }).mode = "read";
const store = new kv.Store(`${fs.prefix}/cache`);

export const echo = {
  name: "echo",
  description: "Echoes its input back.",
  parameters: {
    type: "object",
    properties: {
      text: { type: "string" },
      times: { type: "integer", minimum: 1, maximum: 3 },
    },
    required: ["text"],
  },
  async execute({ args }) {
    await client("https://example.invalid/");
    await store.set("last", args.text);
    return { output: args.text.repeat(args.times ?? 1) };
  },
};

export const helper = { name: "helper" };

export const quiet = { name: "quiet", parameters: { type: "object" } };
