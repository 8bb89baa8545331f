export const tool = {
  name: "tool",
  description: "Parameters must be a JSON Schema object.",
  parameters: "a string, not a schema",
};
