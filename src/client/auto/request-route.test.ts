import { describe, expect, it } from "vitest";
import { routeRequest } from "./scoring.js";

const withKnowledge = { hasKnowledge: true };

// [request, expected route, expected reason (start)]
const TABLE: [string, "rag" | "plan", string][] = [
  // English: simple knowledge questions
  ["What is our deploy process?", "rag", "simple knowledge question"],
  ["How do I rotate the API keys?", "rag", "simple knowledge question"],
  ["Why do we use PostgreSQL instead of MySQL?", "rag", "simple knowledge question"],
  ["Explain the approval gate for memory writes", "rag", "simple knowledge question"],
  ["Who owns the billing service?", "rag", "simple knowledge question"],
  ["What should we add to the onboarding guide?", "rag", "simple knowledge question"],
  ["how to fix a stuck migration", "rag", "simple knowledge question"],
  ["Is the staging database backed up nightly", "rag", "simple knowledge question"],
  // English: changes and complex work
  ["Implement retries in the HTTP client", "plan", 'asks for a change ("implement")'],
  ["Refactor the session store to use SQLite", "plan", 'asks for a change ("refactor")'],
  ["fix the flaky login test", "plan", 'asks for a change ("fix")'],
  ["Add a --json flag to the status command", "plan", 'asks for a change ("add")'],
  ["Migrate the config from YAML to TOML", "plan", 'asks for a change ("migrate")'],
  ["Write unit tests for the token parser", "plan", 'asks for a change ("write")'],
  ["Can you add rate limiting to the gateway?", "plan", 'asks for a change ("add")'],
  ["Please, could you refactor the router?", "plan", 'asks for a change ("refactor")'],
  ["The login page is broken, please fix it.", "plan", 'asks for a change ("fix")'],
  ["Summarize the incident", "rag", "simple knowledge question"],
  ["The deploy failed last night.", "plan", "not a question"],
  ["Why does src/server/start.ts open the database twice?", "plan", "mentions files or paths"],
  ["What does config.yaml control?", "plan", "mentions files or paths"],
  ["Why does this throw?\n```\nconst x = y.z();\n```", "plan", "contains code"],
  ["Do these:\n- read the docs\n- summarise them", "plan", "several steps (a list)"],
  ["What is the deploy process and then how do we roll back?", "plan", "several steps (sequencing words)"],
  ["What is X? What is Y? What is Z?", "plan", "several questions"],
  [`What is ${"very ".repeat(100)}important?`, "plan", "long request"],
  ["", "plan", "empty request"],
  // Portuguese: perguntas simples
  ["Qual é o processo de deploy?", "rag", "simple knowledge question"],
  ["Como faço para rotacionar as chaves da API?", "rag", "simple knowledge question"],
  ["Por que usamos PostgreSQL?", "rag", "simple knowledge question"],
  ["O que é o gate de aprovação da memória", "rag", "simple knowledge question"],
  ["Explique a política de backup", "rag", "simple knowledge question"],
  ["Quem é responsável pelo serviço de cobrança?", "rag", "simple knowledge question"],
  ["Como se cria um token de acesso?", "rag", "simple knowledge question"],
  ["Onde ficam os logs de auditoria?", "rag", "simple knowledge question"],
  // Portuguese: mudanças e trabalho complexo
  ["Implemente retentativas no cliente HTTP", "plan", 'asks for a change ("implemente")'],
  ["Refatorar o armazenamento de sessões", "plan", 'asks for a change ("refatorar")'],
  ["Corrija o teste de login instável", "plan", 'asks for a change ("corrija")'],
  ["Crie um endpoint de saúde", "plan", 'asks for a change ("crie")'],
  ["Migrar a configuração de YAML para TOML", "plan", 'asks for a change ("migrar")'],
  ["Adicione uma flag --json ao comando status", "plan", 'asks for a change ("adicione")'],
  ["Você pode corrigir o bug do login?", "plan", 'asks for a change ("corrigir")'],
  ["Por favor, atualize a documentação do gateway", "plan", 'asks for a change ("atualize")'],
  ["Escreva testes para o parser de tokens", "plan", 'asks for a change ("escreva")'],
  ["Me ajude a refatorar o roteador", "plan", 'asks for a change ("refatorar")'],
  ["O deploy falhou ontem à noite, precisa corrigir.", "plan", 'asks for a change ("corrigir")'],
  ["Por que src/server/start.ts abre o banco duas vezes?", "plan", "mentions files or paths"],
  ["Qual é o processo de deploy e depois como fazemos rollback?", "plan", "several steps (sequencing words)"],
];

describe("routeRequest", () => {
  it.each(TABLE)("%j → %s (%s)", (text, route, reason) => {
    const decision = routeRequest(text, withKnowledge);
    expect(decision.route).toBe(route);
    expect(decision.reason.startsWith(reason)).toBe(true);
  });

  it("sends even a simple question to the planner when no knowledge source is selected", () => {
    expect(routeRequest("What is our deploy process?", { hasKnowledge: false })).toEqual({
      route: "plan",
      reason: "simple question, but no knowledge source is selected",
    });
    expect(routeRequest("Qual é o processo de deploy?", { hasKnowledge: false }).route).toBe("plan");
  });

  it("ignores URLs when looking for file paths", () => {
    expect(
      routeRequest("What does https://example.com/docs/api/v2 say about limits?", withKnowledge).route,
    ).toBe("rag");
  });

  it("is deterministic", () => {
    for (const [text] of TABLE)
      expect(routeRequest(text, withKnowledge)).toEqual(routeRequest(text, withKnowledge));
  });
});
