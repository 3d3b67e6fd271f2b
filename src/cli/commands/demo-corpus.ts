// A small sample corpus for `ivoai demo`: a fictional organisation's notes, in English and Portuguese.

export const DEMO_CORPUS: Record<string, string> = {
  "runbooks/deploy-billing.md": `# Deploying the billing service

The billing service is released through the \`release-billing\` pipeline. Before a deploy, check that the
payments dashboard shows no open incidents and that the database migration job finished.

1. Merge to main; the pipeline builds the container image and runs the contract tests.
2. Approve the canary stage; 5 % of traffic moves to the new version for 30 minutes.
3. If the error rate stays under 0.5 %, approve the full rollout.

Rollback: run the pipeline's \`rollback\` stage, which restores the previous image tag.
`,
  "runbooks/incident-response.md": `# Incident response

Page the on-call engineer through the paging tool. The incident commander opens a channel named
\`inc-<date>-<topic>\`, keeps a timeline and posts status updates every 30 minutes. After resolution,
write a blameless post-mortem within five working days.
`,
  "architecture/search-service.md": `# Search service architecture

The search service indexes product documents nightly. Queries go through the API gateway, which enforces
rate limits and authentication. The index lives in a replicated cluster with three nodes; a node failure
does not lose data. Latency target: p99 under 200 ms.
`,
  "guias/implantacao-cobranca.md": `# Guia de implantação do serviço de cobrança

Para implantar o serviço de cobrança, use o pipeline \`release-billing\`. Antes de implantar, verifique o
painel de pagamentos e confirme que a migração do banco de dados terminou. Em caso de erro, execute a etapa
de reversão (rollback) do pipeline.
`,
  "guias/ferias-e-folgas.md": `# Férias e folgas

Pedidos de férias são feitos no portal de pessoas com pelo menos 30 dias de antecedência. A aprovação
cabe ao gestor direto. Folgas compensatórias precisam ser usadas em até 90 dias.
`,
  "decisions/adr-007-postgres.md": `---
title: ADR 007 — PostgreSQL for the ledger
---

We chose PostgreSQL for the ledger because it gives serialisable transactions, mature replication and the
team already operates it. Alternatives considered: a document store (rejected: weak multi-row
transactions) and a managed ledger service (rejected: vendor lock-in).
`,
};
