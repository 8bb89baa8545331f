export const tool = {
  name: "tool",
  description: "Fails while loading.",
  parameters: { type: "object" },
};

throw new Error("configuration file missing");
