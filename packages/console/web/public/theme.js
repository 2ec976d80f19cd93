// Applies the saved (or the system's) theme before the first paint, so the page never flashes the wrong one.
(() => {
  let theme = null;
  try {
    theme = localStorage.getItem('flint-console-theme');
  } catch {
    // storage blocked: follow the system
  }
  if (theme !== 'light' && theme !== 'dark') theme = matchMedia('(prefers-color-scheme: light)').matches ? 'light' : 'dark';
  document.documentElement.dataset.theme = theme;
})();
