// formatSum renders a sum the way the tool reports it.
export function formatSum(a: number, b: number): string {
  return `${a} + ${b} = ${a + b}`;
}
