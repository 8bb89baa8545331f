export const first = {
  name: "first",
  description: "Not the export the manifest asks for.",
  parameters: { type: "object" },
};

export const second = { name: "second" };
