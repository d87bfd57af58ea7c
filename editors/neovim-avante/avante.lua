-- mm as an avante.nvim ACP provider. Paste into your Neovim config (or the
-- opts of your plugin manager's avante spec).
require("avante").setup({
  provider = "mm",
  acp_providers = {
    mm = {
      command = "mm",
      args = { "acp" },
      env = {
        MM_BASE_URL = "http://127.0.0.1:8080/v1",
      },
    },
  },
})
