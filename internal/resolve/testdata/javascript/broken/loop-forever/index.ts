let n = 0;
while (true) {
  n++;
}

export const tool = {
  name: "tool",
  description: "Never finishes loading.",
  parameters: { type: "object" },
};
