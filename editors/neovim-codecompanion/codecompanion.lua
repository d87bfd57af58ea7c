-- mm as a CodeCompanion ACP adapter. Paste into your Neovim config (or the
-- opts of your plugin manager's codecompanion spec).
require("codecompanion").setup({
  adapters = {
    acp = {
      mm = function()
        -- Any ACP adapter can be the base; only the fields below matter.
        return require("codecompanion.adapters").extend("gemini_cli", {
          name = "mm",
          formatted_name = "mm",
          commands = {
            default = { "mm", "acp" },
          },
          defaults = {
            mcpServers = {},
            timeout = 20000,
          },
          -- No env here: mm finds the model server on the usual local ports,
          -- or reads baseURL from ~/.config/mm/agent.yaml.
        })
      end,
    },
  },
  interactions = {
    chat = { adapter = "mm" },
  },
})
