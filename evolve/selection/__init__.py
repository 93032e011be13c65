"""Selection: surrogate screening, bandit allocation of oracle rollouts, and acceptance.

Modules: `config` (SelectionConfig, presets), `acceptance` (RRSI Algorithm 2), `guards`
(non-compensatory guards), `bandit` (allocators), `budget` (typed budgets, dry-run estimate),
`rubric` / `rubric_llm` (SkillLift rubric surrogate), `features` / `learned` (COBRA-style learned
surrogate). Everything takes plain task ids, rewards and texts, and an injected rng.
"""
