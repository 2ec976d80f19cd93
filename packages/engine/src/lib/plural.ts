/** `1 function`, `3 functions`: a count with its noun, for log lines. */
export const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;
