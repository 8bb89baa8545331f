import isNumber from "is-number";
import { formatSum } from "./lib/format";

interface Args {
  a: number;
  b: number;
}

export const adder = {
  name: "adder",
  description: "Adds two numbers.",
  parameters: {
    type: "object",
    properties: {
      b: { type: "number", description: "The second addend." },
      a: { type: "number", description: "The first addend." },
    },
    required: ["a", "b"],
    additionalProperties: false,
  },
  async execute({ args }: { args: Args }) {
    if (!isNumber(args.a) || !isNumber(args.b)) {
      return { output: "a and b must be numbers" };
    }
    return { output: formatSum(args.a, args.b) };
  },
};
