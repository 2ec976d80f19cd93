import { readdir } from 'node:fs/promises';

/**
 * The numbered log files of a file-based store (`log-00000007.<extension>`): a store appends to the
 * newest generation and, when it compacts, starts the next one after writing a snapshot.
 */
export function logGenerations(extension: string): {
  logName(generation: number): string;
  /** Log generations found in the folder, ascending. */
  listLogs(dir: string): Promise<Array<[number, string]>>;
} {
  const pattern = new RegExp(`^log-(\\d+)\\.${extension}$`);
  return {
    logName: (generation) => `log-${String(generation).padStart(8, '0')}.${extension}`,
    async listLogs(dir) {
      const logs: Array<[number, string]> = [];
      for (const name of await readdir(dir)) {
        const match = pattern.exec(name);
        if (match) logs.push([Number(match[1]), name]);
      }
      return logs.sort((a, b) => a[0] - b[0]);
    },
  };
}
