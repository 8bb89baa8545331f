// The test writes ../shared.ts beside this package: outside it, so not pinned.
import { greeting } from "../shared";

export const tool = {
  name: "tool",
  description: greeting,
  parameters: { type: "object" },
};
