export default async function (input, ctx) {
  // Real sites validate the caller and write through ctx; tests only load this file.
  return { code: 0, msg: 'ok', data: { received: Object.keys(input ?? {}) } };
}
