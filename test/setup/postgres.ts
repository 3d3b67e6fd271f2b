// Makes sure the PostgreSQL the store and replica tests use answers (they never skip).
import { postgresProblem, TEST_PG_URL } from "../postgres.js";

export default async function setup(): Promise<void> {
  const problem = await postgresProblem();
  if (problem === undefined) return;
  const where = new URL(TEST_PG_URL);
  throw new Error(
    `the tests need PostgreSQL at ${where.host} as ${where.username} (${problem}): run 'sudo scripts/ci-postgres.sh' (Debian's postgresql package), or set IVOAI_TEST_PG_URL`,
  );
}
