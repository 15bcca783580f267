// The dashboard's entry module: the theme, then the app.
import { h, render } from 'preact';
import { App } from './app.js';
import { applyTheme } from './theme.js';

applyTheme();
const root = document.getElementById('app');
root.textContent = '';
render(h(App, null), root);
