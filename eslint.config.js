// typescript-eslint with type information: no-floating-promises and friends matter in a server.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/",
      "dist-bench/",
      "node_modules/",
      "coverage/",
      ".oooi-out/",
      ".stryker-tmp/",
      "reports/",
      "stryker.config.mjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-unnecessary-condition": ["error", { allowConstantLoopConditions: true }],
      // client-node's generated models (V1Lease, CoreV1Event, …) are classes in type only: its serializer
      // reads any object by attribute name, and its own examples build request bodies as literals.
      "@typescript-eslint/no-unsafe-class-instance-assignment": "off",
    },
  },
  { files: ["**/*.js"], ...tseslint.configs.disableTypeChecked },
);
