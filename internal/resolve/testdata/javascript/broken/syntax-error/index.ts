export const tool = {
  name: "tool",
  description: "Does not parse.",
  parameters: { type: "object" },
};

function broken(a: number, b: number): number {
  return a +* b;
}
