export const tool = {
  name: "tool",
  description: "Loads a module with import(), which tools cannot.",
  parameters: { type: "object" },
  async execute() {
    const kv = await import("agentc:kv");
    return { output: String(kv) };
  },
};
