export const tool = {
  name: "tool",
  description: "Tool arguments are an object; this schema describes a string.",
  parameters: { type: "string", minLength: 1 },
};
