// A javascript tool: agentform bundles this file with esbuild and reads the
// exported tool object's name, description and parameters (JSON Schema).

interface Args {
  name: string;
}

export const greet = {
  name: "greet",
  description: "Greets someone by name.",
  parameters: {
    type: "object",
    properties: {
      name: { type: "string", description: "Who to greet." },
    },
    required: ["name"],
  },
  async execute({ args }: { args: Args }) {
    return { output: `Hello, ${args.name}!` };
  },
};
