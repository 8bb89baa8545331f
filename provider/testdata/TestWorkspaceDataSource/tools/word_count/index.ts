interface Args {
  text: string;
}

function countWords(text: string): number {
  const words = text.trim().split(/\s+/);
  return words[0] === "" ? 0 : words.length;
}

export const word_count = {
  name: "word_count",
  description: "Counts the words in a text.",
  parameters: {
    type: "object",
    properties: {
      text: { type: "string", description: "The text to count." },
    },
    required: ["text"],
  },
  async execute({ args }: { args: Args }) {
    return { output: String(countWords(args.text)) };
  },
};
