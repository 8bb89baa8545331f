// left-pad is declared in package.json but not installed (no node_modules).
import leftPad from "left-pad";

export const tool = {
  name: "tool",
  description: "Pads text.",
  parameters: { type: "object", properties: { text: { type: "string" } } },
  async execute({ args }: { args: { text: string } }) {
    return { output: leftPad(args.text, 10) };
  },
};
