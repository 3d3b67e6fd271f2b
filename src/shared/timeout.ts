// Bounding optional work: a promise that loses the race against a timer rejects with `message`.

export async function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  message = `timed out after ${ms} ms`,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
