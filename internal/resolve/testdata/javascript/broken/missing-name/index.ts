export const tool = {
  description: "Has no name.",
  parameters: { type: "object" },
};
