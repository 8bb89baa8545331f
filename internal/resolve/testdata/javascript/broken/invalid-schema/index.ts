export const tool = {
  name: "tool",
  description: "The schema of a is not valid JSON Schema.",
  parameters: {
    type: "object",
    properties: {
      a: { type: 12 },
    },
  },
};
